#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorApp

/// `parlor serve [options]`: the server. Other subcommands arrive with the CLI issue.
let arguments = Array(CommandLine.arguments.dropFirst())
let command = arguments.first ?? "serve"

func fail(_ message: String, code: Int32 = 2) -> Never {
    FileHandle.standardError.write(Data("parlor: \(message)\n".utf8))
    exit(code)
}

switch command {
case "serve":
    let options = Array(arguments.dropFirst())
    if options.contains("--help") || options.contains("-h") {
        print(AppConfiguration.helpText(), terminator: "")
        exit(0)
    }
    Server.run(options: options)
case "openapi":
    print(openAPIDocumentText(), terminator: "")
case "--help", "-h", "help":
    print("""
        Usage: parlor <command> [options]

        Commands:
          serve     run the server (see parlor serve --help)
          openapi   print the OpenAPI 3.1 document of the HTTP API
        """)
default:
    fail("unknown command \(command); see parlor --help")
}
