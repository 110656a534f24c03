"""The agent side of pmcd's PMDA protocol (pcp.pmda and cpmda without libpcp_pmda)."""
