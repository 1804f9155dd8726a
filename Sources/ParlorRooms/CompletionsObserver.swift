/// Calls the completions of the batch's HTTP operations: their results, or after a rollback their failures.
struct CompletionsObserver: BatchEndObserver {
    func batchDidEnd(_ end: BatchEnd, in rooms: RoomsService) {
        for completion in end.completions { completion() }
    }
}
