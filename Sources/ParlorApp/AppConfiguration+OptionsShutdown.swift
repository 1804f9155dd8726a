import ParlorLoop

extension AppConfiguration {
    /// How long a stop may take, whatever the database or its name server does.
    static let shutdownOptions: [ConfigurationOption] = [
        option("--shutdown-timeout", "PARLOR_SHUTDOWN_TIMEOUT", "5", "seconds from SIGTERM/SIGINT to exit: in-flight requests get half, then the rooms and the database (node lease) are closed; what is not done by then is abandoned with a warning and the process exits 1 (a second signal exits at once)") {
            $0.http.shutdownTimeout = .seconds(try seconds($1, "--shutdown-timeout"))
        },
    ]
}
