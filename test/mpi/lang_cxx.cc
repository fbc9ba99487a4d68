// lang_cxx.cc - a C++ MPI program (built with mpicxx): the C API from C++
// with standard containers and templates, and the MPI:: bindings MPICH
// builds with --enable-cxx.  Every collective's result is checked; exit 1
// on a wrong value.
#include <mpi.h>

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

namespace {

template <typename T> MPI_Datatype mpi_type();
template <> MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }
template <> MPI_Datatype mpi_type<int>() { return MPI_INT; }
template <> MPI_Datatype mpi_type<long long>() { return MPI_LONG_LONG; }

int failures = 0;

void expect(bool ok, const std::string &what, int rank)
{
    if (!ok) {
        std::fprintf(stderr, "lang_cxx: rank %d: %s\n", rank, what.c_str());
        failures++;
    }
}

// sum over ranks r of (r + 1) * (i % 7 + 1): exact in every type used here
template <typename T> void allreduce_check(int rank, int size, std::size_t n)
{
    std::vector<T> in(n), out(n, T(-1));
    for (std::size_t i = 0; i < n; i++)
        in[i] = T((rank + 1) * (int(i % 7) + 1));
    MPI_Allreduce(in.data(), out.data(), int(n), mpi_type<T>(), MPI_SUM, MPI_COMM_WORLD);
    const T ranks = T(size * (size + 1) / 2);
    for (std::size_t i = 0; i < n; i++)
        if (out[i] != ranks * T(int(i % 7) + 1)) {
            expect(false, "MPI_Allreduce of " + std::to_string(n) + " elements: element " +
                              std::to_string(i) + " wrong", rank);
            return;
        }
}

} // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    for (std::size_t n : {1u, 13u, 1000u, 70000u}) {
        allreduce_check<double>(rank, size, n);
        allreduce_check<int>(rank, size, n);
        allreduce_check<long long>(rank, size, n);
    }

    // bcast of a std::string's bytes from the last rank
    std::string msg = rank == size - 1 ? "offloaded from C++" : std::string(18, '?');
    MPI_Bcast(&msg[0], int(msg.size()), MPI_CHAR, size - 1, MPI_COMM_WORLD);
    expect(msg == "offloaded from C++", "MPI_Bcast of a string gave '" + msg + "'", rank);

    // reduce to rank 0 with MPI_MAX
    std::vector<int> mine(64), top(64, -1);
    std::iota(mine.begin(), mine.end(), rank);
    MPI_Reduce(mine.data(), top.data(), 64, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int i = 0; i < 64; i++)
            if (top[i] != size - 1 + i) {
                expect(false, "MPI_Reduce MPI_MAX element " + std::to_string(i) + " is " +
                                  std::to_string(top[i]), rank);
                break;
            }

    // the MPI:: bindings (MPICH --enable-cxx)
    int cxx_rank = MPI::COMM_WORLD.Get_rank();
    expect(cxx_rank == rank, "MPI::COMM_WORLD.Get_rank() differs from MPI_Comm_rank", rank);
    double one = 1.0, total = 0.0;
    MPI::COMM_WORLD.Allreduce(&one, &total, 1, MPI::DOUBLE, MPI::SUM);
    expect(total == double(size), "MPI::COMM_WORLD.Allreduce gave " + std::to_string(total), rank);
    MPI::COMM_WORLD.Barrier();

    int bad = 0;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        std::printf("lang_cxx: %d ranks, %s\n", size, bad ? "FAILED" : "all results right");
    MPI_Finalize();
    return bad ? 1 : 0;
}
