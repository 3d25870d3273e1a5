! A Fortran program for `unwindkit trace build` (Intel traceback is a Fortran facility):
! a module procedure, an internal function, a recursive subroutine and the main program.
module solver_mod
  implicit none
contains
  function norm2d(x, y) result(r)
    real(8), intent(in) :: x, y
    real(8) :: r
    r = sqrt(x * x + y * y)
  end function norm2d

  recursive subroutine countdown(n, total)
    integer, intent(in) :: n
    integer, intent(inout) :: total
    if (n <= 0) then
      return
    end if
    total = total + n
    call countdown(n - 1, total)
  end subroutine countdown
end module solver_mod

program solver
  use solver_mod
  implicit none
  integer :: total, i
  real(8) :: acc
  total = 0
  acc = 0.0d0
  call countdown(10, total)
  do i = 1, 5
    acc = acc + norm2d(dble(i), dble(total))
  end do
  print *, total, scaled(acc)
contains
  function scaled(v) result(s)
    real(8), intent(in) :: v
    real(8) :: s
    s = v / 2.0d0
  end function scaled
end program solver
