extension AppConfiguration {
    /// Presence by role in big stage rooms (issue 37): when a stage room summarises its audience, how often it
    /// tells everyone who came and went, and how large a stage room may grow.
    static let audienceOptions: [ConfigurationOption] = [
        option("--full-presence-limit", "PARLOR_FULL_PRESENCE_LIMIT", "200", "joined members above which a stage room announces its listeners' joins and leaves in full only to moderators and to everyone else as room:audience summaries (back to full below 90 % of it); open rooms always announce every member") {
            $0.rooms.fullPresenceLimit = try int($1, "--full-presence-limit", 1...1_000_000)
        },
        option("--audience-update-interval", "PARLOR_AUDIENCE_UPDATE_INTERVAL", "1", "seconds between a summary-mode stage room's room:audience events (the count and a dozen of the listeners who came and went)") {
            $0.rooms.audienceUpdateInterval = .seconds(try seconds($1, "--audience-update-interval"))
        },
        option("--max-audience", "PARLOR_MAX_AUDIENCE", "10000", "members of one stage room (open rooms keep --max-members-per-room; a room's max_members can only lower it)") {
            $0.rooms.maxAudience = try int($1, "--max-audience", 1...1_000_000)
        },
    ]
}
