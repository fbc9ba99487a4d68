## ch4:glex - sources of the netmod, and (from their own lists,
## src/emu/sources.am and src/offload/sources.am, which Makefile.am uses too)
## of the NIC model and schedule compiler it drives; the graft copies this
## project's src/emu and src/offload next to it as netmod/glex_emu and
## netmod/glex_offload.

include $(top_srcdir)/src/mpid/ch4/netmod/glex_emu/sources.am
include $(top_srcdir)/src/mpid/ch4/netmod/glex_offload/sources.am

if BUILD_CH4_NETMOD_GLEX

AM_CPPFLAGS += -I$(top_srcdir)/src/mpid/ch4/netmod/glex \
               -I$(top_srcdir)/src/mpid/ch4/netmod/glex_emu \
               -I$(top_srcdir)/src/mpid/ch4/netmod/glex_offload

noinst_HEADERS += \
    src/mpid/ch4/netmod/glex/glex_pre.h \
    src/mpid/ch4/netmod/glex/glex_impl.h \
    $(glex_emu_headers) $(glex_offload_headers)

mpi_core_sources += \
    src/mpid/ch4/netmod/glex/func_table.c \
    src/mpid/ch4/netmod/glex/glex_am.c \
    src/mpid/ch4/netmod/glex/glex_coll.c \
    src/mpid/ch4/netmod/glex/glex_comm.c \
    src/mpid/ch4/netmod/glex/glex_error.c \
    src/mpid/ch4/netmod/glex/glex_init.c \
    src/mpid/ch4/netmod/glex/glex_misc.c \
    src/mpid/ch4/netmod/glex/glex_p2p.c \
    src/mpid/ch4/netmod/glex/glex_progress.c \
    src/mpid/ch4/netmod/glex/glex_ring.c \
    $(glex_emu_sources) $(glex_offload_sources)

endif
