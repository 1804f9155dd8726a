/// With several nodes: records which events this node has delivered (committed), or undoes the batch's marks
/// (rolled back), and clears the batch's cluster bookkeeping (RoomsService+Cluster.swift).
struct ClusterBatchObserver: BatchEndObserver {
    func batchDidEnd(_ end: BatchEnd, in rooms: RoomsService) {
        rooms.finishClusterBatch(changedRooms: end.changedRooms, committed: end.committed)
    }
}
