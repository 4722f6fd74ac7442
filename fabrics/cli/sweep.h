// `fabricsim sweep SWEEP.yaml`: every point of a sweep file (sweep_file.h) in its own
// process (`fabricsim run`), -j N at once; points already done (their directory holds a
// results.json) are skipped, so an interrupted sweep resumes; the results merge into
// DIR/sweep.csv and DIR/sweep.json with the swept keys as columns. Under mpirun the points
// are spread over the ranks (rank r runs points i with i mod N == r) and rank 0 merges;
// --shard I/N does the same split without MPI (a Slurm array).
#pragma once
#include <string>
#include <vector>

namespace fabricsim {

// args[0] == "sweep". Returns the exit code; bad input throws InputError.
int sweep_main(const std::vector<std::string>& args);

}  // namespace fabricsim
