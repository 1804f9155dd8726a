import ParlorRooms

/// Limits per client address inside one room (issue 34, item 6): one client in open mode can mint any number of
/// names, each within its own per-member rates.
extension AppConfiguration {
    static let addressLimitOptions: [ConfigurationOption] = [
        option("--chat-rate-per-address", "PARLOR_CHAT_RATE_PER_ADDRESS", "5", "chat messages a second into one room from one client address (IPv6: one /64), whichever names send them (message:error:rate-limited above); 0 = no limit") {
            $0.rooms.messagesPerAddressPerSecond = try int($1, "--chat-rate-per-address", 0...10_000)
        },
        option("--reaction-rate-per-address", "PARLOR_REACTION_RATE_PER_ADDRESS", "10", "reactions a second into one room from one client address (IPv6: one /64), whichever names send them (reaction:error:rate-limited above); 0 = no limit") {
            $0.rooms.reactionsPerAddressPerSecond = try int($1, "--reaction-rate-per-address", 0...10_000)
        },
        option("--max-members-per-address", "PARLOR_MAX_MEMBERS_PER_ADDRESS", "0", "members of one room joined from one client address (IPv6: one /64) (room:error:full above); 0 = no limit, so a town hall behind one office NAT still fills") {
            $0.rooms.maxMembersPerAddress = try int($1, "--max-members-per-address", 0...1_000_000)
        },
    ]
}
