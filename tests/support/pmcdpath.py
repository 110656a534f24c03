"""The path a test starts a private pmcd through.

`/etc/init.d/pmcd` (install-pcp.sh starting the machine's pmcd, a developer restarting it
while tests run) finds pmcd processes by the path in their argv[0]: with a private pmcd
running from /usr/lib/pcp/bin/pmcd it refuses to act ("process ID in pmcd.pid is
different"), and with no pid file it signals every one. A private pmcd started through a
symbolic link of its own is not one the script finds. (No test restarts the machine's
pmcd: one that needs a restart restarts a private pmcd of its own.)
"""
import os

SYSTEM_PMCD = "/usr/lib/pcp/bin/pmcd"


def private_pmcd(folder: str, target: str = SYSTEM_PMCD) -> str:
    """A symbolic link named pmcd in folder (made once) to target; the path to start."""
    link = os.path.join(str(folder), "pmcd")
    if not os.path.islink(link):
        os.symlink(target, link)
    return link
