# tests/verifier - the case tables (cases/*.c) are linked into the case runner and the
# kernel oracle test.
file(GLOB BPFRT_VCASES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/verifier/cases/*.c)
foreach(t test_verifier_cases test_verifier_cases_oracle test_verifier_unpriv_oracle)
  target_sources(${t} PRIVATE ${BPFRT_VCASES})
  target_include_directories(${t} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/verifier)
endforeach()
target_include_directories(test_verifier_soundness PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/verifier)
add_test(NAME verifier.cli_verify
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/verifier/cli_verify.sh $<TARGET_FILE:bpfrt_cli>)
set_tests_properties(verifier.cli_verify PROPERTIES LABELS unit TIMEOUT 120)
# verifier.kfunc_oracle: the harness and load-time checks in test_kfunc_oracle.c, one file
# per family of kfuncs (kfunc_oracle.h).
target_sources(test_verifier_kfunc_oracle PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/verifier/kfunc_oracle_net.c
  ${CMAKE_CURRENT_SOURCE_DIR}/verifier/kfunc_oracle_objects.c
  ${CMAKE_CURRENT_SOURCE_DIR}/verifier/kfunc_oracle_sections.c
  ${CMAKE_CURRENT_SOURCE_DIR}/verifier/kfunc_oracle_str.c)
target_include_directories(test_verifier_kfunc_oracle PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/verifier)
