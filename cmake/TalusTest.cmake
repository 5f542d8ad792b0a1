# talus_test(): one call registers a ctest test (or a family of them) and, when asked, builds its
# executable. Included by tests/CMakeLists.txt; relative paths (SOURCES, PYTHON) are taken from the
# calling folder.
#
#   talus_test(NAME
#     [SOURCES file.c ...]        build the executable TARGET from these files
#     [TARGET target]             the executable run (default test_NAME when SOURCES is given); without
#                                 SOURCES an existing target (another test's, talus_bench, ...)
#     [INCLUDES dir ...]          target_include_directories(TARGET PRIVATE ...)
#     [LIBS lib ...]              target_link_libraries(TARGET PRIVATE ...), link options included
#     [DEPENDS target ...]        add_dependencies(TARGET ...): targets the test runs (talus_cli, ...)
#     [PYTHON script.py]          run the script with ${TALUS_TEST_PYTHON} (Debian's /usr/bin/python3)
#     [COMMAND cmd ...]           run this command line instead (pytest, cmake -P, ...)
#     [MODES mode ...]            one test NAME_mode per mode, the mode as the first argument
#     [ARGS arg ...]              arguments after the command (and after the mode)
#     [SKIP_77]                   exit code 77 means skipped (SKIP_RETURN_CODE 77)
#     [TIMEOUT seconds] [LABELS label ...] [ENVIRONMENT VAR=value ...]
#     [PROPERTIES name value ...] any other test property (PROCESSORS, FIXTURES_SETUP, ...))
#
# Examples:
#   talus_test(determinism SOURCES test_determinism.c INCLUDES ${CBLAS_INCLUDE_DIR}
#              LIBS talus talus_controllers ${OPENBLAS_LIB} m ARGS ${CMAKE_SOURCE_DIR}/robots LABELS solver)
#   talus_test(contact SOURCES test_contact.c LIBS talus m MODES incline stack pile LABELS solver)
#   talus_test(viewer PYTHON test_viewer.py MODES live plot ARGS $<TARGET_FILE:talus_cli>
#              SKIP_77 TIMEOUT 300 LABELS viewer)
function(talus_test name)
  cmake_parse_arguments(PARSE_ARGV 1 T "SKIP_77" "TARGET;PYTHON;TIMEOUT"
    "SOURCES;INCLUDES;LIBS;DEPENDS;COMMAND;MODES;ARGS;LABELS;ENVIRONMENT;PROPERTIES")
  if(T_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "talus_test(${name}): unknown arguments: ${T_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT T_TARGET AND T_SOURCES)
    set(T_TARGET test_${name})
  endif()
  if(T_SOURCES)
    add_executable(${T_TARGET} ${T_SOURCES})
  endif()
  if(T_INCLUDES OR T_LIBS OR T_DEPENDS)
    if(NOT T_SOURCES)
      message(FATAL_ERROR "talus_test(${name}): INCLUDES, LIBS and DEPENDS need SOURCES "
                          "(the target is built here)")
    endif()
    if(T_INCLUDES)
      target_include_directories(${T_TARGET} PRIVATE ${T_INCLUDES})
    endif()
    if(T_LIBS)
      target_link_libraries(${T_TARGET} PRIVATE ${T_LIBS})
    endif()
    if(T_DEPENDS)
      add_dependencies(${T_TARGET} ${T_DEPENDS})
    endif()
  endif()

  set(n 0)
  foreach(x T_TARGET T_PYTHON T_COMMAND)
    if(${x})
      math(EXPR n "${n} + 1")
    endif()
  endforeach()
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "talus_test(${name}): give exactly one of SOURCES / TARGET, PYTHON, COMMAND")
  endif()
  if(T_PYTHON)
    if(NOT IS_ABSOLUTE "${T_PYTHON}")
      set(T_PYTHON ${CMAKE_CURRENT_SOURCE_DIR}/${T_PYTHON})
    endif()
    set(cmd ${TALUS_TEST_PYTHON} ${T_PYTHON})
  elseif(T_COMMAND)
    set(cmd ${T_COMMAND})
  else()
    set(cmd ${T_TARGET})
  endif()

  if(T_MODES)
    set(tests "")
    foreach(mode ${T_MODES})
      add_test(NAME ${name}_${mode} COMMAND ${cmd} ${mode} ${T_ARGS})
      list(APPEND tests ${name}_${mode})
    endforeach()
  else()
    add_test(NAME ${name} COMMAND ${cmd} ${T_ARGS})
    set(tests ${name})
  endif()
  # one call per property: LABELS and ENVIRONMENT values are lists themselves
  if(T_PROPERTIES) # single-valued NAME VALUE pairs
    set_tests_properties(${tests} PROPERTIES ${T_PROPERTIES})
  endif()
  if(T_SKIP_77)
    set_tests_properties(${tests} PROPERTIES SKIP_RETURN_CODE 77)
  endif()
  if(T_TIMEOUT)
    set_tests_properties(${tests} PROPERTIES TIMEOUT ${T_TIMEOUT})
  endif()
  if(T_LABELS)
    set_tests_properties(${tests} PROPERTIES LABELS "${T_LABELS}")
  endif()
  if(T_ENVIRONMENT)
    set_tests_properties(${tests} PROPERTIES ENVIRONMENT "${T_ENVIRONMENT}")
  endif()
endfunction()
