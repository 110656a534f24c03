"""Live host contexts: host specs, the pmcd transport, the host context."""
