! lang_f08.f90 - a Fortran program using the mpi_f08 module (built with
! mpifort): blocking and nonblocking allreduce, reduce, bcast and barrier on
! real(8), integer and logical data, every result checked; stops with
! code 1 on a wrong value.
program lang_f08
  use mpi_f08
  implicit none
  integer, parameter :: n = 5000
  integer :: rank, nprocs, i, bad, allbad
  real(8) :: x(n), y(n)
  integer :: k(n), m(n)
  logical :: flag, anyflag
  character(len=24) :: word
  type(MPI_Request) :: req
  type(MPI_Status) :: status

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  bad = 0

  do i = 1, n
    x(i) = dble((rank + 1) * mod(i, 11))
    k(i) = rank + i
  end do

  call MPI_Allreduce(x, y, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  do i = 1, n
    if (y(i) /= dble(nprocs * (nprocs + 1) / 2 * mod(i, 11))) bad = bad + 1
  end do
  if (bad > 0) print '(a,i0,a)', 'lang_f08: rank ', rank, ': MPI_Allreduce sum wrong'

  m = -1
  call MPI_Reduce(k, m, n, MPI_INTEGER, MPI_MAX, 0, MPI_COMM_WORLD)
  if (rank == 0) then
    do i = 1, n
      if (m(i) /= nprocs - 1 + i) bad = bad + 1
    end do
  end if

  flag = rank == nprocs - 1
  call MPI_Allreduce(flag, anyflag, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD)
  if (.not. anyflag) bad = bad + 1

  word = 'not yet'
  if (rank == 0) word = 'offloaded from Fortran'
  call MPI_Bcast(word, len(word), MPI_CHARACTER, 0, MPI_COMM_WORLD)
  if (word /= 'offloaded from Fortran') bad = bad + 1

  ! nonblocking: start, compute, wait
  y = -1
  call MPI_Iallreduce(x, y, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, req)
  call MPI_Wait(req, status)
  do i = 1, n
    if (y(i) /= dble(nprocs * (nprocs + 1) / 2 * mod(i, 11))) bad = bad + 1
  end do
  call MPI_Ibarrier(MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)

  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Allreduce(bad, allbad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (allbad == 0) then
      print '(a,i0,a)', 'lang_f08: ', nprocs, ' ranks, all results right'
    else
      print '(a,i0,a)', 'lang_f08: ', allbad, ' wrong values'
    end if
  end if
  call MPI_Finalize()
  if (allbad /= 0) stop 1
end program lang_f08
