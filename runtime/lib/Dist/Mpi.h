//===- Mpi.h - The MPI communicator (internal) ------------------*- C++ -*-===//

#ifndef MIXRT_LIB_DIST_MPI_H
#define MIXRT_LIB_DIST_MPI_H

#include "mixrt/Communicator.h"

namespace mixrt {

#ifdef MIXRT_HAVE_MPI
/// Starts MPI and returns MPI_COMM_WORLD's communicator; MPI ends when it
/// is destroyed.
std::unique_ptr<Communicator> createMpiCommunicator(int *argc, char ***argv,
                                                    double timeoutSeconds);
#endif

} // namespace mixrt

#endif // MIXRT_LIB_DIST_MPI_H
