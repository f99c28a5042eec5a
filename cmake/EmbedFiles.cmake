#===- cmake/EmbedFiles.cmake - A directory of C files into mixc -----------===#
# Writes OUTPUT, a C++ fragment defining `static const EmbeddedFile NAME[]`
# and `NAME_count`: every .c and .h file directly in ROOT and every file
# under ROOT/include (by its path relative to ROOT) with its text, so that mixc can write them out and compile them
# into a package with no file of the runtime at hand. EmbeddedFile is
# `struct { const char *path; const char *text; }`, declared by the includer.
#   cmake -DROOT=... -DNAME=... -DOUTPUT=... -P EmbedFiles.cmake
foreach(var ROOT NAME OUTPUT)
  if(NOT ${var})
    message(FATAL_ERROR "EmbedFiles: ${var} is not set")
  endif()
endforeach()
file(GLOB files RELATIVE "${ROOT}" "${ROOT}/*.c" "${ROOT}/*.h")
file(GLOB_RECURSE headers RELATIVE "${ROOT}" "${ROOT}/include/*.h")
list(APPEND files ${headers})
list(SORT files)
set(body "")
set(count 0)
foreach(f ${files})
  file(READ "${ROOT}/${f}" text)
  string(FIND "${text}" ")mixrt_embedded\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "EmbedFiles: ${ROOT}/${f} contains the delimiter")
  endif()
  string(APPEND body "  {\"${f}\", R\"mixrt_embedded(${text})mixrt_embedded\"},\n")
  math(EXPR count "${count} + 1")
endforeach()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${ROOT} by cmake/EmbedFiles.cmake: do not edit.\n"
  "static const EmbeddedFile ${NAME}[] = {\n${body}};\n"
  "static const unsigned ${NAME}_count = ${count};\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
