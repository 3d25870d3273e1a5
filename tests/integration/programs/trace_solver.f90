! The module of the Fortran program of test_trace_debuggers.py: solve calls check_residual,
! which stops the program with abort() (SIGABRT).
module trace_solver
  implicit none
contains
  subroutine check_residual(r)
    real, intent(in) :: r
    if (r > 0.5) then
      call abort()
    end if
    print *, r
  end subroutine check_residual

  subroutine solve(n)
    integer, intent(in) :: n
    real :: r
    r = real(n) * 0.25
    call check_residual(r)
    print *, n
  end subroutine solve
end module trace_solver
