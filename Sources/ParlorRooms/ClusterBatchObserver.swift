/// With several nodes: records which events this node has delivered (committed), or undoes the batch's marks
/// (rolled back), and clears the batch's cluster bookkeeping (ClusterSync.swift).
struct ClusterBatchObserver: BatchEndObserver {
    func batchDidEnd(_ end: BatchEnd, in rooms: RoomsService) {
        rooms.clusterSync?.finishBatch(changedRooms: end.changedRooms, committed: end.committed)
    }
}
