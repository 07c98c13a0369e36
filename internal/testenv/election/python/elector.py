"""A user's program running the Python client's own leader election (kubernetes.leaderelection,
python3-kubernetes from Debian), as its example.py does. internal/testenv/election starts it
with /usr/bin/python3, optionally under faketime, and reads what it prints.

Lines starting with "elector:" are this program's; the rest is the library's logging.
"""
import argparse
import sys

from kubernetes import config
from kubernetes.leaderelection import electionconfig, leaderelection
from kubernetes.leaderelection.resourcelock.configmaplock import ConfigMapLock


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kubeconfig", required=True)
    p.add_argument("--namespace", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--identity", required=True)
    p.add_argument("--lock", choices=["configmap", "lease"], default="configmap")
    p.add_argument("--lease-duration", type=int, default=15)
    p.add_argument("--renew-deadline", type=int, default=10)
    p.add_argument("--retry-period", type=int, default=2)
    args = p.parse_args()

    config.load_kube_config(config_file=args.kubeconfig)
    if args.lock == "lease":
        from leaselock import LeaseLock
        lock = LeaseLock(args.name, args.namespace, args.identity)
    else:
        lock = ConfigMapLock(args.name, args.namespace, args.identity)

    def started():
        print("elector: started leading", args.identity, flush=True)

    def stopped():
        print("elector: stopped leading", args.identity, flush=True)

    cfg = electionconfig.Config(lock, lease_duration=args.lease_duration, renew_deadline=args.renew_deadline,
                                retry_period=args.retry_period, onstarted_leading=started,
                                onstopped_leading=stopped)
    print("elector: running", args.identity, flush=True)
    leaderelection.LeaderElection(cfg).run()
    # run() returns only after a leader failed to renew; the library has no release.
    print("elector: exited election", args.identity, flush=True)


if __name__ == "__main__":
    sys.exit(main())
