# tests/build - build-level checks (label build): symbol hygiene of libbpfrt.a/.so and of
# src/libbpfrt.map, and an install into a temporary prefix with pkg-config and a program
# built against it.  The library checks look at the plain build only: sanitizer builds add
# their own symbols and runtime needs.
if(NOT BPFRT_SANITIZE AND NOT BPFRT_FUZZ)
  set(dir ${CMAKE_CURRENT_SOURCE_DIR}/build)
  add_test(NAME build.symbols_static
    COMMAND sh ${dir}/check_symbols.sh static $<TARGET_FILE:bpfrt_static>)
  add_test(NAME build.symbols_shared
    COMMAND sh ${dir}/check_symbols.sh shared $<TARGET_FILE:bpfrt> ${CMAKE_SOURCE_DIR})
  add_test(NAME build.install
    COMMAND sh ${dir}/check_install.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR} ${CMAKE_C_COMPILER})
  add_test(NAME build.bench_smoke
    COMMAND sh ${dir}/bench_smoke.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR} ${CMAKE_C_COMPILER})
  set_tests_properties(build.symbols_static build.symbols_shared build.install build.bench_smoke
    PROPERTIES LABELS build TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()

# src/libbpfrt.map names every BPFRT_API function of include/ and nothing else (no build
# needed, so every configuration runs it); the failure lists the lines to add or remove.
add_test(NAME build.symbol_map
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/build/check_symbols.sh map ${CMAKE_SOURCE_DIR})
set_tests_properties(build.symbol_map PROPERTIES LABELS build TIMEOUT 60)

# The dependency rules of tests/build/layers.txt: includes of src/ and tools/, and calls
# between the object files of the library and the CLI (listed here at generate time).
if(TARGET bpfrt_cli)
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/layers-objects.txt CONTENT
    "$<JOIN:$<TARGET_OBJECTS:bpfrt_obj>,\n>\n$<JOIN:$<TARGET_OBJECTS:bpfrt_cli>,\n>\n")
  add_test(NAME build.layers COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/build/check_layers.py
    ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/build/layers.txt
    ${CMAKE_BINARY_DIR}/layers-objects.txt)
  set_tests_properties(build.layers PROPERTIES LABELS build TIMEOUT 120)
endif()

# Documentation references: relative Markdown links (and their anchors), docs/*.md paths
# named in code and docs, and "STATUS.md #N" sections (docs/STATUS.md is condensed, its
# history kept in docs/history/).
add_test(NAME build.doc_links COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/build/check_doc_links.py
  ${CMAKE_SOURCE_DIR})
set_tests_properties(build.doc_links PROPERTIES LABELS build TIMEOUT 60)

# examples/*.c: programs written against the public API only (the shared library and
# include/, never src/); each runs as a test, from the source dir, and must exit 0.
file(GLOB BPFRT_EXAMPLES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/examples/*.c)
foreach(src ${BPFRT_EXAMPLES})
  get_filename_component(name ${src} NAME_WE)
  add_executable(example_${name} ${src})
  target_link_libraries(example_${name} PRIVATE bpfrt)
  set_target_properties(example_${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
  add_test(NAME examples.${name} COMMAND example_${name})
  set_tests_properties(examples.${name} PROPERTIES LABELS unit TIMEOUT 300
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
endforeach()

# A program linked against libbpfrt.a through the public API only, naming none of the
# files that register object kinds, the helper registry or bpf() commands when the
# library is loaded: they must work as with libbpfrt.so (libbpfrt.a is one object).
add_executable(static_link ${CMAKE_CURRENT_SOURCE_DIR}/build/static_link.c)
target_link_libraries(static_link PRIVATE bpfrt_static)
add_test(NAME build.static_link COMMAND static_link)
set_tests_properties(build.static_link PROPERTIES LABELS build TIMEOUT 120 SKIP_RETURN_CODE 77)
