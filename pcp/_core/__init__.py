"""Every lower floor's foundation: constants, errors, the one door to the compiled module, ctypes mirrors, the context Protocol, pcp.conf."""
