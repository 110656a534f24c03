"""PM_CONTEXT_LOCAL: pmcd.conf's PMDAs served to the client as child processes."""
