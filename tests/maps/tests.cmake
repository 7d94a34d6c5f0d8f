# tests/maps - the "bpfrt map" CLI on pinned maps (maps.cli_map).
add_test(NAME maps.cli_map
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/maps/cli_map.sh $<TARGET_FILE:bpfrt_cli>)
set_tests_properties(maps.cli_map PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 120)
# Not a test: user-space map operation costs against the kernel (run by hand).
add_executable(bench_map_hash ${CMAKE_CURRENT_SOURCE_DIR}/maps/bench_hash.c)
target_include_directories(bench_map_hash PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(bench_map_hash PRIVATE bpfrt_static)
