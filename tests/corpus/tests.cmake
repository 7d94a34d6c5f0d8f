# tests/corpus/tests.cmake - the real-world corpus differential (issue #15): every program
# of the corpus objects (docs/CORPUS.md), loaded into the kernel (through libbpf) and into
# bpfrt.  Label `corpus`; skips (77) without the corpus, without root, and is not built
# without libbpf-dev.  `corpus_diff -r FILE` writes the per-program table.
# corpus_dump: what the ELF stage makes of one object, as text (scripts/corpus-dump.sh
# compares two builds over the corpus); a tool, not a test.
add_executable(corpus_dump ${CMAKE_CURRENT_LIST_DIR}/corpus_dump.c)
target_include_directories(corpus_dump PRIVATE ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(corpus_dump PRIVATE bpfrt_static)
pkg_check_modules(LIBBPF IMPORTED_TARGET libbpf)
if(LIBBPF_FOUND)
  add_executable(corpus_diff ${CMAKE_CURRENT_LIST_DIR}/corpus_diff.c
    ${CMAKE_CURRENT_LIST_DIR}/corpus_load.c ${CMAKE_CURRENT_LIST_DIR}/corpus_compare.c
    ${CMAKE_CURRENT_LIST_DIR}/corpus_report.c ${CMAKE_CURRENT_LIST_DIR}/corpus_log.c
    ${CMAKE_CURRENT_LIST_DIR}/corpus_rodata.c)
  target_include_directories(corpus_diff PRIVATE ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/tests)
  target_link_libraries(corpus_diff PRIVATE bpfrt_static PkgConfig::LIBBPF)
  target_compile_definitions(corpus_diff PRIVATE BPFRT_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  add_test(NAME corpus.diff COMMAND corpus_diff)
  # COST: the longest test by far (260 s of the release step's 317 s in session 14), so
  # ctest -j starts it first and the other tests run beside it; without it a fresh build
  # (no Testing/Temporary/CTestCostData.txt yet) starts it in declaration order, late.
  set_tests_properties(corpus.diff PROPERTIES LABELS corpus SKIP_RETURN_CODE 77 TIMEOUT 900
    COST 1000 WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
endif()
