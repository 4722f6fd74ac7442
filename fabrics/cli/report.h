// `fabricsim report RESULTS.json... -o report.html`: one self-contained HTML page for a
// design review of the runs (results.json of `run`, or of `compare`, whose systems are
// expanded): the system (topology drawing, counts of devices, links and ports, resolved
// parameters), busbw and time curves against the analytic ceiling, the bottleneck of each
// row, a per-port utilisation heatmap, queue and credit-stall distributions, and
// side-by-side tables when there are several systems. The charting library is embedded,
// so the page needs no network.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fabricsim {

// args[0] == "report". Returns the exit code; bad input throws InputError.
int report_main(const std::vector<std::string>& args);

// The report's data for one results.json (`label` names the system): what the page draws.
nlohmann::json report_system(const nlohmann::json& results, const std::string& label,
                             const std::string& file);

}  // namespace fabricsim
