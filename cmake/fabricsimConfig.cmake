# find_package(fabricsim): the installed libraries as fabricsim::models (the SystemC
# models), fabricsim::config (YAML -> system description) and fabricsim::app (elaboration
# and the command line's entry point, app_main). Their dependencies are found here.
include(CMakeFindDependencyMacro)
find_dependency(PkgConfig)
pkg_check_modules(SYSTEMC REQUIRED IMPORTED_TARGET systemc)
find_dependency(yaml-cpp)
find_dependency(nlohmann_json)
find_dependency(Protobuf)
include(${CMAKE_CURRENT_LIST_DIR}/fabricsimTargets.cmake)
foreach(lib models config app)
  if(NOT TARGET fabricsim::${lib})
    add_library(fabricsim::${lib} INTERFACE IMPORTED)
    set_target_properties(fabricsim::${lib} PROPERTIES INTERFACE_LINK_LIBRARIES fabricsim_fabricsim_${lib})
  endif()
endforeach()
set_property(TARGET fabricsim_fabricsim_app APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES
             ${SYSTEMC_INCLUDE_DIRS})
