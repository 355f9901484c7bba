#include "tilefuse/tools/cli.hpp"

#include <cstdio>

namespace tilefuse::tools {

void style_app(CLI::App& app, const std::string& about) {
  app.get_formatter()->label("Usage", "usage");
  app.get_formatter()->column_width(24);
  app.footer(about);
  app.allow_extras();  // unknown options get the tools' own message in parse_args
}

int usage_error(const CLI::App& app, const std::string& reason, int usage_status) {
  std::fprintf(stderr, "%s: %s\nRun '%s --help' for the options.\n", app.get_name().c_str(), reason.c_str(),
               app.get_name().c_str());
  return usage_status;
}

std::optional<int> parse_args(CLI::App& app, int argc, char** argv, int usage_status) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    return usage_error(app, e.what(), usage_status);
  }
  std::vector<std::string> extras = app.remaining();
  if (!extras.empty()) {
    const std::string& extra = extras.front();
    return usage_error(app, (extra.rfind('-', 0) == 0 ? "unknown option " : "unexpected argument ") + extra,
                       usage_status);
  }
  return std::nullopt;
}

}  // namespace tilefuse::tools
