// Modules whose SFrame tables are checked and indexed ahead of their first frame: a file too
// large to wait for (side_file()'s `later`) has its Module::prepare_sframe() started as soon
// as GDB loads it (the Python side calls prepare_module()), while GDB goes on reading the
// core and the libraries, and the engine takes that Module when it loads the file
// (load_module()).
#pragma once

#include <memory>
#include <string>

#include "unwindkit/unwind/modules.h"

namespace unwindkit::gdb {

// Starts preparing the file at `path` and keeps the Module for take_prepared().
void prepare_module(const std::string& path);

// The Module prepare_module() made for `path`, if the file there is still the one it read
// (device, inode, size and change time); nullptr otherwise. Each is taken once.
std::shared_ptr<unwind::Module> take_prepared(const std::string& path);

}  // namespace unwindkit::gdb
