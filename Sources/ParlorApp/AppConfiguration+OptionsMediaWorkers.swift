import Foundation

extension AppConfiguration {
    /// The number of cores: one media worker each (issue 36).
    public static let defaultMediaWorkers = max(1, ProcessInfo.processInfo.activeProcessorCount)

    /// How many media workers (threads) the forwarding unit spreads its sessions over; all share the one media port
    /// (docs/media.md, "Workers").
    static let mediaWorkerOptions: [ConfigurationOption] = [
        option("--media-workers", "PARLOR_MEDIA_WORKERS", "the number of cores",
               "media worker threads for --media sfu: each owns a share of the sessions and sends on its own socket bound to the media port; one receive path hands each datagram to its session's worker") {
            $0.mediaWorkers = try int($1, "--media-workers", 1...256)
        },
    ]
}
