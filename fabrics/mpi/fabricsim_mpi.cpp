// The MPI side of `mpirun -n N fabricsim sweep`: a plug-in the sweep loads with dlopen()
// only when it runs under an MPI launcher, so that the fabricsim binary itself links no MPI
// library (every other command starts as fast as before). C functions, no C++ across the
// boundary. Built when CMake finds MPI (Debian: libopenmpi-dev).
#include <mpi.h>

extern "C" {

// MPI_Init; the rank and the number of ranks. Returns 0 on success.
int fabricsim_mpi_init(int* rank, int* size) {
  int argc = 0;
  char** argv = nullptr;
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  return 0;
}

// Every rank's `value`, maxed, to every rank (a barrier that also agrees on a status).
int fabricsim_mpi_max(int value) {
  int out = value;
  MPI_Allreduce(&value, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

int fabricsim_mpi_finalize() { return MPI_Finalize() == MPI_SUCCESS ? 0 : 1; }
}
