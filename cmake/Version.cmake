#===- cmake/Version.cmake - The project's version --------------------------===#
# Included by the whole project's CMakeLists.txt and by the runtime's when
# it builds on its own (cmake -S runtime), so that both say the same.
set(MIX_VERSION "0.1.0")
