#===- cmake/EmbedSupportSource.cmake - C support code into mixc -----------===#
# Writes OUTPUT, a C++ fragment defining `static const char NAME[]`: the C
# source SOURCE with its `#include "mixrt/PackageABI.h"` replaced by the
# header ABI itself, so that mixc can compile it into a package with no file
# of the runtime at hand.
#   cmake -DSOURCE=... -DABI=... -DNAME=... -DOUTPUT=... -P EmbedSupportSource.cmake
foreach(var SOURCE ABI NAME OUTPUT)
  if(NOT ${var})
    message(FATAL_ERROR "EmbedSupportSource: ${var} is not set")
  endif()
endforeach()
file(READ "${SOURCE}" source)
file(READ "${ABI}" abi)
string(FIND "${source}" "#include \"mixrt/PackageABI.h\"" at)
if(at EQUAL -1)
  message(FATAL_ERROR "EmbedSupportSource: ${SOURCE} does not include mixrt/PackageABI.h")
endif()
string(REPLACE "#include \"mixrt/PackageABI.h\"" "${abi}" source "${source}")
string(FIND "${source}" ")mixrt_embedded\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "EmbedSupportSource: ${SOURCE} contains the delimiter")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${SOURCE} and ${ABI} by cmake/EmbedSupportSource.cmake: do not edit.\n"
  "static const char ${NAME}[] = R\"mixrt_embedded(${source})mixrt_embedded\";\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
