// Registration of the `unwindkit` command tree (see commands.h).
#include "commands.h"

#include "cbf_commands.h"
#include "compact_unwind_commands.h"
#include "sframe_commands.h"
#include "status_commands.h"
#include "trace_commands.h"
#include "walk_commands.h"

namespace unwindkit::lldb_plugin {

void register_commands(lldb::SBDebugger debugger, Installer& installer) {
  lldb::SBCommandInterpreter interpreter = debugger.GetCommandInterpreter();
  // The command objects live as long as LLDB keeps the commands: for the process's life.
  lldb::SBCommand root = interpreter.AddMultiwordCommand(
      "unwindkit", "Unwind with SFrame tables: LLDB's own unwinder gets them as DWARF CFI "
                   "(side files), and unwindkit can walk and explain stacks itself.");
  root.AddCommand("status", new StatusCommand(installer),
                  "Show each module's unwind tables, side files and any errors (with the byte "
                  "offset of the bad field).",
                  "unwindkit status", "");
  root.AddCommand("enable", new SwitchCommand(installer, true),
                  "Give LLDB's unwinder the SFrame rules of every module (the default).",
                  "unwindkit enable", "");
  root.AddCommand("disable", new SwitchCommand(installer, false),
                  "Take the SFrame rules away again: LLDB unwinds on its own.",
                  "unwindkit disable", "");
  lldb::SBCommand set = root.AddMultiwordCommand("set", "Change an unwindkit setting.");
  set.AddCommand("side-file-wait-limit", new WaitLimitCommand(installer, true),
                 "Bytes of SFrame above which a module's first session gets its quick side file "
                 "(no prologue analysis) while the analyzed one is made for later sessions; "
                 "'unlimited': always wait for the analyzed one.",
                 "unwindkit set side-file-wait-limit BYTES|unlimited", "");
  lldb::SBCommand show = root.AddMultiwordCommand("show", "Show an unwindkit setting.");
  show.AddCommand("side-file-wait-limit", new WaitLimitCommand(installer, false),
                  "Show the SFrame size above which a module's first session gets its quick "
                  "side file.",
                  "unwindkit show side-file-wait-limit", "");
  root.AddCommand("bt", new BacktraceCommand(installer),
                  "Walk the stack with unwindkit's own unwinder, showing the rule and table "
                  "behind each frame.",
                  "unwindkit bt [-t <thread-index>] [-c <count>]", "");
  root.AddCommand("regs", new RegistersCommand(installer),
                  "Show the registers unwindkit's own walk computed for frame N.",
                  "unwindkit regs <frame-index> [-t <thread-index>]", "");
  lldb::SBCommand sframe = root.AddMultiwordCommand(
      "sframe", "Inspect the SFrame sections of the selected target's modules.");
  sframe.AddCommand("dump", new SframeDumpCommand(installer),
                    "Print SFrame sections as `readelf --sframe` does, or each row's rule as "
                    "JSON.",
                    "unwindkit sframe dump [-m <module>] [--json]", "");
  sframe.AddCommand("lookup", new SframeLookupCommand(installer),
                    "Show the SFrame rule covering a load address.",
                    "unwindkit sframe lookup <address>", "");
  sframe.AddCommand("check", new SframeCheckCommand(installer),
                    "Run the strict SFrame checks; every problem with its byte offset.",
                    "unwindkit sframe check [-m <module>]", "");
  lldb::SBCommand trace = root.AddMultiwordCommand(
      "trace", "Inspect the .trace (Intel traceback) sections of the selected target's modules.");
  trace.AddCommand("dump", new TraceDumpCommand(installer),
                   "Print .trace sections record by record, as `unwindkit trace dump` does.",
                   "unwindkit trace dump [-m <module>]", "");
  trace.AddCommand("lookup", new TraceLookupCommand(installer),
                   "Show the routine, file and line .trace gives a load address.",
                   "unwindkit trace lookup <address>", "");
  register_cbf_commands(root, installer);
  register_compact_unwind_commands(root, installer);
}

}  // namespace unwindkit::lldb_plugin
