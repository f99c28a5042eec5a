#===- cmake/AddMixSupportSource.cmake - Embed C support code in mixc ------===#
# mix_embed_support_source(FILE BASE DESCRIPTION) embeds
# runtime/support/FILE as the C++ fragment BASE.inc in the current binary
# directory, defining `static const char kBASE[]` (EmbedSupportSource.cmake),
# and appends it to MIX_EMBEDDED_SOURCES in the caller's scope.
function(mix_embed_support_source FILE BASE DESCRIPTION)
  set(output ${CMAKE_CURRENT_BINARY_DIR}/${BASE}.inc)
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND}
      -DSOURCE=${PROJECT_SOURCE_DIR}/runtime/support/${FILE}
      -DABI=${MIX_ABI_HEADER} -DNAME=k${BASE} -DOUTPUT=${output}
      -P ${PROJECT_SOURCE_DIR}/cmake/EmbedSupportSource.cmake
    DEPENDS ${PROJECT_SOURCE_DIR}/runtime/support/${FILE} ${MIX_ABI_HEADER}
      ${PROJECT_SOURCE_DIR}/cmake/EmbedSupportSource.cmake
    COMMENT "Embedding ${DESCRIPTION}")
  set(MIX_EMBEDDED_SOURCES ${MIX_EMBEDDED_SOURCES} ${output} PARENT_SCOPE)
endfunction()
