! The main program of the Fortran program of test_trace_debuggers.py (a second source file),
! and an external subroutine between it and the module.
program trace_driver
  implicit none
  call run_case(3)
end program trace_driver

subroutine run_case(k)
  use trace_solver
  implicit none
  integer, intent(in) :: k
  call solve(k)
end subroutine run_case
