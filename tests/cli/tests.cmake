# tests/cli/tests.cmake - tests/cli/test_<file>.c tests tools/bpfrt/<file>.c: each gets the CLI
# source it tests, the JSON writer those print through, and the CLI's include folder.
file(GLOB BPFRT_CLI_UNIT_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.c)
foreach(src ${BPFRT_CLI_UNIT_TESTS})
  get_filename_component(name ${src} NAME_WE)
  string(REGEX REPLACE "^test_" "" file ${name})
  set(tool_sources ${CMAKE_SOURCE_DIR}/tools/bpfrt/json.c)
  if(NOT file STREQUAL "json")
    list(APPEND tool_sources ${CMAKE_SOURCE_DIR}/tools/bpfrt/${file}.c)
  endif()
  target_sources(test_cli_${file} PRIVATE ${tool_sources})
  target_include_directories(test_cli_${file} PRIVATE ${CMAKE_SOURCE_DIR}/tools/bpfrt)
endforeach()

# The conformance tests and the assembler's test read the suite's .data files through the
# CLI's reader.
foreach(t test_conformance_conformance test_conformance_negative test_isa_asm)
  if(TARGET ${t})
    target_sources(${t} PRIVATE ${CMAKE_SOURCE_DIR}/tools/bpfrt/datafile.c)
    target_include_directories(${t} PRIVATE ${CMAKE_SOURCE_DIR}/tools/bpfrt)
  endif()
endforeach()
