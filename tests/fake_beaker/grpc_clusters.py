"""Cluster RPCs: ListClusters (paged, of one organization), GetCluster and ResolveClusterName.

ListClusters and GetCluster are retried by beaker-py on UNAVAILABLE (their requests start with
List and Get), so an injected UNAVAILABLE or a lost reply costs the client 2 s and one more call.
"""

from __future__ import annotations

from typing import Any

from beaker import beaker_pb2 as pb2

from .clusters import ClusterRecord
from .grpc_common import ServicerBase


class ClustersMixin(ServicerBase):
    def ListClusters(
        self, request: pb2.ListClustersRequest, context: Any
    ) -> pb2.ListClustersResponse:
        def listed(opts: Any) -> list[ClusterRecord]:
            org = self.state.org_name(opts.organization_id) if opts.organization_id else None
            return self.clusters.all(org_name=org)

        page, token = self._listing(request, listed, lambda c: c.id, context)
        return pb2.ListClustersResponse(clusters=[c.message() for c in page], next_page_token=token)

    def GetCluster(self, request: pb2.GetClusterRequest, context: Any) -> pb2.GetClusterResponse:
        found = self.clusters.get(request.cluster_id)
        record = self._found(found, context, f"cluster {request.cluster_id!r}")
        return pb2.GetClusterResponse(cluster=record.message())

    def ResolveClusterName(
        self, request: pb2.ResolveClusterNameRequest, context: Any
    ) -> pb2.ResolveClusterNameResponse:
        found = self.clusters.resolve(request.owner_name, request.cluster_name)
        record = self._found(found, context, "cluster")
        return pb2.ResolveClusterNameResponse(cluster_id=record.id)
