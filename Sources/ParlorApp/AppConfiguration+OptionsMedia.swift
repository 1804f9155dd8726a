import ParlorLoop
import ParlorRooms

extension AppConfiguration {
    /// The media port's abuse limits (issue 34).
    static let mediaOptions: [ConfigurationOption] = [
        option("--max-media-sessions-per-user", "PARLOR_MAX_MEDIA_SESSIONS_PER_USER", "20", "live media sessions (one per connection per room) one user may have; more offers get media:error:too-many-sessions; 0: no limit") {
            $0.rooms.maxMediaSessionsPerUser = try int($1, "--max-media-sessions-per-user", 0...1_000_000)
        },
        option("--max-media-sessions-per-ip", "PARLOR_MAX_MEDIA_SESSIONS_PER_IP", "200", "live media sessions from one client address (an IPv6 /64), whoever the users; 0: no limit") {
            $0.rooms.maxMediaSessionsPerAddress = try int($1, "--max-media-sessions-per-ip", 0...1_000_000)
        },
        option("--media-offer-rate", "PARLOR_MEDIA_OFFER_RATE", "2", "media:offer a second per connection, after a burst of --media-offer-burst (per user: twice both); more get media:error:rate-limited; 0: no limit") {
            guard let rate = Double($1.trimmingSpaces), rate >= 0, rate <= 1000 else {
                throw ConfigurationError(message: "--media-offer-rate must be a number from 0 to 1000, not \($1)")
            }
            $0.rooms.mediaOfferRate = rate
        },
        option("--media-offer-burst", "PARLOR_MEDIA_OFFER_BURST", "5", "media:offer one connection may send at once before --media-offer-rate applies") {
            $0.rooms.mediaOfferBurst = try int($1, "--media-offer-burst", 1...1000)
        },
        option("--media-setup-timeout", "PARLOR_MEDIA_SETUP_TIMEOUT", "10", "seconds a media session may go without completing ICE (no address answering the server's check) before it is ended") {
            $0.rooms.mediaSetupTimeout = .seconds(try seconds($1, "--media-setup-timeout"))
        },
    ]
}
