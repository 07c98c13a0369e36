"""LeaseLock: a coordination.k8s.io/v1 Lease lock for the Python client's LeaderElection,
written in the style of its resourcelock/configmaplock.py (22.6 ships no Lease lock): the
same get/create/update contract and record, kept in the Lease spec instead of an annotation.

The elector hands over times as str(datetime.fromtimestamp(...)), naive local time; they are
written as RFC 3339 micro time in UTC, as a Lease requires, and read back in the elector's
form so that an unchanged Lease compares equal to the record last observed.
"""
import datetime
import logging

from kubernetes import client
from kubernetes.client.rest import ApiException
from kubernetes.leaderelection.leaderelectionrecord import LeaderElectionRecord

logging.basicConfig(level=logging.INFO)


def to_micro_time(elector_time):
    # naive means local time, as datetime.fromtimestamp gave it
    t = datetime.datetime.fromisoformat(elector_time).astimezone(datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def from_micro_time(t):
    if t is None:
        return None
    return str(t.astimezone().replace(tzinfo=None))


class LeaseLock:
    def __init__(self, name, namespace, identity):
        self.api_instance = client.CoordinationV1Api()
        self.name = name
        self.namespace = namespace
        self.identity = str(identity)
        self.lease_reference = None

    def get(self, name, namespace):
        """:return: 'True, election record' if the Lease was found (record None if it has no
        holder yet) else 'False, exception response'"""
        try:
            lease = self.api_instance.read_namespaced_lease(name, namespace)
        except ApiException as e:
            return False, e
        self.lease_reference = lease
        spec = lease.spec
        if spec is None or spec.holder_identity is None:
            return True, None
        duration = None if spec.lease_duration_seconds is None else str(spec.lease_duration_seconds)
        return True, LeaderElectionRecord(spec.holder_identity, duration, from_micro_time(spec.acquire_time),
                                          from_micro_time(spec.renew_time))

    def create(self, name, namespace, election_record):
        body = client.V1Lease(metadata=client.V1ObjectMeta(name=name), spec=self.spec(client.V1LeaseSpec(), election_record))
        try:
            self.api_instance.create_namespaced_lease(namespace, body)
            return True
        except ApiException as e:
            logging.info("Failed to create lock as {}".format(e))
            return False

    def update(self, name, namespace, updated_record):
        try:
            lease = self.lease_reference
            lease.spec = self.spec(lease.spec or client.V1LeaseSpec(), updated_record)
            self.api_instance.replace_namespaced_lease(name=name, namespace=namespace, body=lease)
            return True
        except ApiException as e:
            logging.info("Failed to update lock as {}".format(e))
            return False

    @staticmethod
    def spec(spec, record):
        spec.holder_identity = record.holder_identity
        spec.lease_duration_seconds = int(record.lease_duration)
        spec.acquire_time = to_micro_time(record.acquire_time)
        spec.renew_time = to_micro_time(record.renew_time)
        return spec
