/*
 * sgl_mpi_proc.c: the start-up of MPI processes (sgl_internal.h): MPI
 * initialized with MPI_THREAD_FUNNELED (only a process's main thread calls
 * MPI), the process-level nodes connected by one communicator per master
 * and its children.  The transport itself is in sgl_mpi.c.  Compiled to
 * nothing without SGL_USE_MPI.
 */
#define _GNU_SOURCE /* dl_iterate_phdr, RTLD_NODELETE */
#include "sgl_internal.h"
#include "sgl_mpi_msg.h"

#ifdef SGL_USE_MPI

#include <stdlib.h>
#include <string.h>

/* dlopen is in the C library itself from glibc 2.34 on (before, in libdl,
 * which an executable does not always link) */
#if defined(__GLIBC__) && defined(__GLIBC_PREREQ)
#if __GLIBC_PREREQ(2, 34)
#define SGL_PIN_OBJECTS 1
#include <dlfcn.h>
#include <link.h>
#endif
#endif

_Thread_local bool sgl_mpi_main_thread;

/* ------------------------------------------------------------------ */
/* Processes                                                            */

bool sgl_mpi_up;

/* Whether an MPI launcher started this process: a variable that the
 * launcher sets in every rank's environment (docs/execution.md, "Started
 * without a launcher").  Open MPI's mpirun: OMPI_COMM_WORLD_SIZE or
 * OMPI_COMM_WORLD_RANK (not the OMPI_MCA_* settings, which users set
 * themselves); MPICH's and Intel MPI's Hydra, and srun with PMI-1/PMI-2:
 * PMI_RANK, PMI_SIZE or PMI_FD; PMIx (Open MPI's mpirun, prterun, srun
 * --mpi=pmix): PMIX_RANK; MVAPICH's mpirun_rsh: MV2_COMM_WORLD_SIZE.
 * SLURM_PROCID alone (a batch script's own environment) is not a
 * launcher: srun's ranks have one of the PMI variables besides. */
static bool under_launcher(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK",
                                       "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "PMI_FD",
                                       "MV2_COMM_WORLD_SIZE", NULL};
    for (const char *const *v = vars; *v; v++)
        if (getenv(*v)) return true;
    return false;
}

void sgl_mpi_init(int *argc, char ***argv, int *nprocs, int *rank)
{
    sgl_mpi_main_thread = true; /* the thread that calls MPI (sgl_mpi_poll) */
    if (!under_launcher()) {
        /* Run directly: one process, MPI never started (no MPI_Init, so
         * no session directory, no helper process, no 0.4 s start-up);
         * the process levels of the shape all map onto this process. */
        *nprocs = 1;
        *rank = 0;
        return;
    }
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        sgl_internal_error("MPI_Init_thread failed");
    sgl_mpi_up = true;
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, nprocs));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, rank));
}

/* Every shared object the process has loaded is made one that is never
 * unloaded (dlopen RTLD_NOLOAD | RTLD_NODELETE), before MPI_Finalize.
 * Open MPI's MPI_Finalize unloads (dlclose) its components and hwloc's
 * plugins, with the libraries they alone use, while a thread of its own
 * may still run there or call there (Open MPI 4.1: now and then a SIGSEGV
 * at an address no longer mapped, after a run's whole output, exit 139).
 * The process ends right after MPI_Finalize, so nothing is kept longer than
 * it would be; objects loaded and released before (MPI_Init's unselected
 * components) are gone already.  The names are copied first: dlopen is not
 * called under dl_iterate_phdr's lock.  Best effort: where a name cannot be
 * kept (no memory) or dlopen fails, that object is left as it is. */
#ifdef SGL_PIN_OBJECTS
typedef struct {
    char **names;
    size_t n, cap;
} object_names;

static int add_object_name(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    object_names *o = data;
    if (!info->dlpi_name || !info->dlpi_name[0]) return 0; /* the executable */
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 64;
        char **names = realloc(o->names, cap * sizeof *names);
        if (!names) return 1; /* stop: pin those named so far */
        o->names = names;
        o->cap = cap;
    }
    char *name = strdup(info->dlpi_name);
    if (name) o->names[o->n++] = name;
    return 0;
}

static void pin_loaded_objects(void)
{
    object_names o = {0};
    dl_iterate_phdr(add_object_name, &o);
    for (size_t i = 0; i < o.n; i++) {
        /* the handle is never closed: its reference is the point */
        (void)dlopen(o.names[i], RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
        free(o.names[i]);
    }
    free(o.names);
}
#else
static void pin_loaded_objects(void) {}
#endif

void sgl_mpi_finalize(void)
{
    sgl_mpi_ticker_stop(); /* no thread of ours while MPI tears down */
    if (!sgl_mpi_up) return;
    pin_loaded_objects();
    MPI_CHECK(MPI_Finalize());
}

void sgl_mpi_abort(void)
{
    int init = 0, done = 0;
    if (MPI_Initialized(&init) != MPI_SUCCESS || MPI_Finalized(&done) != MPI_SUCCESS) return;
    /* on failure exit(1) follows in sgl_internal_error */
    if (init && !done) (void)MPI_Abort(MPI_COMM_WORLD, 1);
}

void sgl_mpi_barrier(void)
{
    if (sgl_mpi_up) MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

void sgl_mpi_allgather_int(int x, int *all)
{
    if (!sgl_mpi_up) {
        all[0] = x;
        return;
    }
    MPI_CHECK(MPI_Allgather(&x, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
}

void sgl_mpi_connect(sgl_node *chain, int plevels, int j0)
{
    /* one communicator per process-level master and its children: at
     * depth l, every process that hosts a node of depth l joins the one
     * of that node's master (colour: the master's position in its depth),
     * in child order */
    const sgl_shape *sh = chain[plevels].shape;
    for (int l = 1; l <= plevels; l++) {
        bool member = l >= j0;
        int color = MPI_UNDEFINED, key = 0;
        if (member) {
            int64_t master = l - 1 >= j0 ? chain[l - 1].id : sgl_shape_parent(sh, l, chain[l].id);
            color = (int)(master - sh->off[l - 1]);
            key = chain[l].child_index;
        }
        MPI_Comm comm = MPI_COMM_NULL;
        MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, color, key, &comm));
        if (comm != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
        if (member) {
            if (l - 1 >= j0) {
                int size = 0;
                MPI_CHECK(MPI_Comm_size(comm, &size));
                if (size != chain[l - 1].nchildren)
                    sgl_internal_error("a master's communicator does not hold its children");
                chain[l - 1].comm_down = comm;
            }
            if (chain[l].child_index != 0) chain[l].comm_up = comm;
        }
    }
    for (int l = j0; l < plevels; l++) {
        chain[l].via = &sgl_transport_mpi;
        chain[l].kids = &chain[l + 1];
        chain[l].nlocal = 1;
    }
}

#endif /* SGL_USE_MPI */
