#pragma once
// Command lines of the tilefuse tools through CLI11: the generated help starts with
// "usage: TOOL ...", and a bad command line prints one "TOOL: reason" line and a hint
// on stderr and exits with the tool's usage status.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace tilefuse::tools {

// An App whose help has the tools' layout; `about` goes below the options.
void style_app(CLI::App& app, const std::string& about);

// Parses argv into app. Returns the exit status when the tool must stop here: 0 after
// --help, `usage_status` after a bad command line; nullopt when the tool goes on.
std::optional<int> parse_args(CLI::App& app, int argc, char** argv, int usage_status);

// Prints the usage error the way parse_args does and returns `usage_status`.
int usage_error(const CLI::App& app, const std::string& reason, int usage_status);

}  // namespace tilefuse::tools
