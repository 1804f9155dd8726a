import ParlorMedia

extension MediaAnswer {
    /// The SSRC the server sends each receive slot with, by mid (`a=ssrc` of each `sendonly` m-line of its answer):
    /// how a client tells the slots' packets apart.
    public static func slotSSRCs(in text: String) throws(MediaClientError) -> [String: UInt32] {
        let answer: SessionDescription
        do { answer = try SessionDescription(parsing: text) } catch { throw MediaClientError("unreadable answer: \(error)") }
        var ssrcs: [String: UInt32] = [:]
        for media in answer.media where media.direction == .sendonly {
            guard let mid = media.mid, let ssrc = media.sources.first?.ssrc else { continue }
            ssrcs[mid] = ssrc
        }
        return ssrcs
    }
}
