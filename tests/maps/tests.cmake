# tests/maps - the "bpfrt map" CLI on pinned maps (maps.cli_map).
add_test(NAME maps.cli_map
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/maps/cli_map.sh $<TARGET_FILE:bpfrt_cli>)
set_tests_properties(maps.cli_map PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 120)
