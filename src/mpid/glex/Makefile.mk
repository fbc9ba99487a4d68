## ch4:glex - sources of the netmod and of the NIC model and schedule
## compiler it drives; the graft links this project's src/emu and src/offload
## next to it as netmod/glex_emu and netmod/glex_offload.

if BUILD_CH4_NETMOD_GLEX

AM_CPPFLAGS += -I$(top_srcdir)/src/mpid/ch4/netmod/glex \
               -I$(top_srcdir)/src/mpid/ch4/netmod/glex_emu \
               -I$(top_srcdir)/src/mpid/ch4/netmod/glex_offload

noinst_HEADERS += \
    src/mpid/ch4/netmod/glex/glex_pre.h \
    src/mpid/ch4/netmod/glex/glex_impl.h \
    src/mpid/ch4/netmod/glex_emu/glex_emu.h \
    src/mpid/ch4/netmod/glex_emu/glex_emu_internal.h \
    src/mpid/ch4/netmod/glex_offload/glex_coll.h \
    src/mpid/ch4/netmod/glex_offload/glex_coll_internal.h \
    src/mpid/ch4/netmod/glex_offload/glex_coll_direct.h

mpi_core_sources += \
    src/mpid/ch4/netmod/glex/func_table.c \
    src/mpid/ch4/netmod/glex/glex_am.c \
    src/mpid/ch4/netmod/glex/glex_coll.c \
    src/mpid/ch4/netmod/glex/glex_comm.c \
    src/mpid/ch4/netmod/glex/glex_init.c \
    src/mpid/ch4/netmod/glex/glex_misc.c \
    src/mpid/ch4/netmod/glex_emu/glex_emu_alu.c \
    src/mpid/ch4/netmod/glex_emu/glex_emu_cleanup.c \
    src/mpid/ch4/netmod/glex_emu/glex_emu_live.c \
    src/mpid/ch4/netmod/glex_emu/glex_emu_mbox.c \
    src/mpid/ch4/netmod/glex_emu/glex_emu_region.c \
    src/mpid/ch4/netmod/glex_emu/glex_emu_desc.c \
    src/mpid/ch4/netmod/glex_emu/glex_emu_engine.c \
    src/mpid/ch4/netmod/glex_emu/glex_emu_fabric.c \
    src/mpid/ch4/netmod/glex_emu/glex_emu_params.c \
    src/mpid/ch4/netmod/glex_emu/glex_emu_place.c \
    src/mpid/ch4/netmod/glex_emu/glex_emu_sync.c \
    src/mpid/ch4/netmod/glex_emu/glex_emu_table.c \
    src/mpid/ch4/netmod/glex_emu/glex_emu_vp.c \
    src/mpid/ch4/netmod/glex_offload/glex_coll_bcast.c \
    src/mpid/ch4/netmod/glex_offload/glex_coll_direct.c \
    src/mpid/ch4/netmod/glex_offload/glex_coll_group.c \
    src/mpid/ch4/netmod/glex_offload/glex_coll_reduce.c \
    src/mpid/ch4/netmod/glex_offload/glex_coll_req.c \
    src/mpid/ch4/netmod/glex_offload/glex_coll_sched.c \
    src/mpid/ch4/netmod/glex_offload/glex_coll_stage.c

endif
