# tests/elf/tests.cmake - compile the C corpus tests/progs/*.bpf.c with the system clang into
# ${CMAKE_BINARY_DIR}/progs/ (tests skip when clang is missing), and the CLI checks of
# `bpfrt object` / `bpfrt btf`.
find_program(BPFRT_BPF_CLANG NAMES clang clang-14 clang-15 clang-16)
file(GLOB BPFRT_BPF_PROGS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/progs/*.bpf.c)
set(BPFRT_BPF_OBJS)
if(BPFRT_BPF_CLANG)
  file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/progs)
  set(bpf_arch_inc)
  if(CMAKE_LIBRARY_ARCHITECTURE)
    set(bpf_arch_inc -I/usr/include/${CMAKE_LIBRARY_ARCHITECTURE})
  endif()
  foreach(src ${BPFRT_BPF_PROGS})
    get_filename_component(name ${src} NAME_WE)
    set(obj ${CMAKE_BINARY_DIR}/progs/${name}.bpf.o)
    add_custom_command(OUTPUT ${obj}
      COMMAND ${BPFRT_BPF_CLANG} -O2 -g -target bpf ${bpf_arch_inc} -I${CMAKE_SOURCE_DIR}/tests/progs
              -Wno-unused-function -c ${src} -o ${obj}
      DEPENDS ${src} ${CMAKE_SOURCE_DIR}/tests/progs/bpfrt_progs.h
      COMMENT "clang -target bpf ${name}.bpf.c" VERBATIM)
    list(APPEND BPFRT_BPF_OBJS ${obj})
  endforeach()
  add_custom_target(bpfrt_bpf_progs ALL DEPENDS ${BPFRT_BPF_OBJS})
endif()

# CLI: `bpfrt object show` on corpus objects (text and JSON) and on a missing file.
if(BPFRT_BPF_CLANG)
  add_test(NAME elf.cli_object_show
    COMMAND $<TARGET_FILE:bpfrt_cli> object show ${CMAKE_BINARY_DIR}/progs/prog_array.bpf.o)
  set_tests_properties(elf.cli_object_show PROPERTIES LABELS unit PASS_REGULAR_EXPRESSION
    "prog 2 'entry': section 'socket', type socket_filter.*insn 0: map_fd map 0 'jump_table'.*map 0 'jump_table': btf, type prog_array, key 4, value 4, max_entries 4.*values \\[1\\] = tail_one, \\[3\\] = tail_two")
  add_test(NAME elf.cli_object_json
    COMMAND $<TARGET_FILE:bpfrt_cli> object show -j ${CMAKE_BINARY_DIR}/progs/global_data.bpf.o)
  set_tests_properties(elf.cli_object_json PROPERTIES LABELS unit PASS_REGULAR_EXPRESSION
    "\"programs\":\\[{\"name\":\"data_sum\",\"section\":\"socket\",\"type\":\"socket_filter\".*\"kind\":\"map_value\".*\"maps\":\\[{\"name\":\".data\",\"kind\":\"data\",\"type\":\"array\",\"key_size\":4,\"value_size\":4,\"max_entries\":1")
  add_test(NAME elf.cli_object_disasm
    COMMAND $<TARGET_FILE:bpfrt_cli> object show -d ${CMAKE_BINARY_DIR}/progs/subprog_static.bpf.o)
  set_tests_properties(elf.cli_object_disasm PROPERTIES LABELS unit PASS_REGULAR_EXPRESSION
    "; +return add3_twice\\(4\\);.*call pc\\+1")
endif()
add_test(NAME elf.cli_object_missing COMMAND $<TARGET_FILE:bpfrt_cli> object show /nonexistent.o)
set_tests_properties(elf.cli_object_missing PROPERTIES LABELS unit WILL_FAIL TRUE)

# `bpfrt btf dump` against `bpftool btf dump file`, object by object.
if(BPFRT_BPF_CLANG)
  add_test(NAME elf.btf_vs_bpftool
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/btf_vs_bpftool.sh $<TARGET_FILE:bpfrt_cli>
            ${CMAKE_BINARY_DIR}/progs)
  set_tests_properties(elf.btf_vs_bpftool PROPERTIES LABELS unit SKIP_RETURN_CODE 77)
endif()

# `bpfrt object run` / `object load`: results through the CLI, and a refused load.
if(BPFRT_BPF_CLANG)
  add_test(NAME elf.cli_object_run
    COMMAND $<TARGET_FILE:bpfrt_cli> object run ${CMAKE_BINARY_DIR}/progs/subprog_global.bpf.o global_calls)
  set_tests_properties(elf.cli_object_run PROPERTIES LABELS unit PASS_REGULAR_EXPRESSION "^55\n$")
  add_test(NAME elf.cli_object_run_json
    COMMAND $<TARGET_FILE:bpfrt_cli> object run -j -r 10 ${CMAKE_BINARY_DIR}/progs/deep_calls.bpf.o chain)
  set_tests_properties(elf.cli_object_run_json PROPERTIES LABELS unit
    PASS_REGULAR_EXPRESSION "^{\"program\":\"chain\",\"retval\":40,\"duration_ns\":[0-9]+}")
  add_test(NAME elf.cli_object_load
    COMMAND $<TARGET_FILE:bpfrt_cli> object load ${CMAKE_BINARY_DIR}/progs/multi_prog.bpf.o)
  set_tests_properties(elf.cli_object_load PROPERTIES LABELS unit PASS_REGULAR_EXPRESSION
    "prog 'prog_a': loaded \\(15 insns\\)\nprog 'prog_b': loaded.*prog 'prog_c': loaded")
  add_test(NAME elf.cli_object_load_untyped
    COMMAND $<TARGET_FILE:bpfrt_cli> object load ${CMAKE_BINARY_DIR}/progs/sec_types.bpf.o)
  set_tests_properties(elf.cli_object_load_untyped PROPERTIES LABELS unit WILL_FAIL TRUE)
endif()

# The libbpf oracle (test_reloc_oracle.c) links the system libbpf when there is one.
if(TARGET test_elf_reloc_oracle)
  pkg_check_modules(BPFRT_TEST_LIBBPF IMPORTED_TARGET libbpf)
  if(BPFRT_TEST_LIBBPF_FOUND)
    target_link_libraries(test_elf_reloc_oracle PRIVATE PkgConfig::BPFRT_TEST_LIBBPF)
    target_compile_definitions(test_elf_reloc_oracle PRIVATE BPFRT_TEST_HAVE_LIBBPF=1)
  endif()
endif()

# `bpfrt prog` (load, show, dump xlated/jited, run) and -j/-p on every command.
if(BPFRT_BPF_CLANG)
  add_test(NAME elf.cli_prog
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/cli_prog.sh $<TARGET_FILE:bpfrt_cli>
            ${CMAKE_BINARY_DIR}/progs)
  set_tests_properties(elf.cli_prog PROPERTIES LABELS unit TIMEOUT 300
    FAIL_REGULAR_EXPRESSION "FAIL:")
endif()

# Man pages and bash completion: installed by `cmake --install` (DESTDIR), rendered by groff
# without warnings, completion in step with commands.def.
add_test(NAME elf.man_install
  COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/man_install.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR}
          ${CMAKE_SOURCE_DIR}/tools/bpfrt/commands.def $<TARGET_FILE:bpfrt_cli>)
set_tests_properties(elf.man_install PROPERTIES LABELS unit TIMEOUT 300
  FAIL_REGULAR_EXPRESSION "FAIL:")
