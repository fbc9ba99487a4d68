! lang_f90.f90 - a Fortran program using the older mpi module (mpifort):
! an allreduce and a bcast checked; stops with code 1 on a wrong value.
program lang_f90
  use mpi
  implicit none
  integer :: rank, nprocs, ierr, total, root_val
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Allreduce(rank + 1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  root_val = 0
  if (rank == 0) root_val = 4242
  call MPI_Bcast(root_val, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (total /= nprocs * (nprocs + 1) / 2 .or. root_val /= 4242) then
    print '(a,i0,a,i0,a,i0)', 'lang_f90: rank ', rank, ': sum ', total, ' bcast ', root_val
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  if (rank == 0) print '(a,i0,a)', 'lang_f90: ', nprocs, ' ranks, all results right'
  call MPI_Finalize(ierr)
end program lang_f90
