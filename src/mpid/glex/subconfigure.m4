[#] start of __file__
dnl ch4:glex - the emulated GLEX NIC netmod (this project's src/mpid/glex,
dnl grafted into MPICH as src/mpid/ch4/netmod/glex by scripts/build-mpich.sh).
dnl MPICH_SUBCFG_AFTER=src/mpid/ch4

AC_DEFUN([PAC_SUBCFG_PREREQ_]PAC_SUBCFG_AUTO_SUFFIX,[
    AM_COND_IF([BUILD_CH4],[
        for glex_net in $ch4_netmods ; do
            if test "$glex_net" = "glex" ; then
                build_ch4_netmod_glex=yes
            fi
        done
    ])
    AM_CONDITIONAL([BUILD_CH4_NETMOD_GLEX],[test "X$build_ch4_netmod_glex" = "Xyes"])
])dnl

AC_DEFUN([PAC_SUBCFG_BODY_]PAC_SUBCFG_AUTO_SUFFIX,[
AM_COND_IF([BUILD_CH4_NETMOD_GLEX],[
    AC_MSG_NOTICE([RUNNING CONFIGURE FOR ch4:glex])
    dnl point-to-point, probe, RMA and partitioned traffic ride on ch4 active messages
    AC_DEFINE([MPIDI_ENABLE_AM_ONLY], 1, [ch4:glex carries pt2pt over active messages])
    AC_DEFINE([HAVE_CH4_NETMOD_GLEX], 1, [the GLEX netmod is built])
    AC_CHECK_HEADER([linux/futex.h], [],
        [AC_MSG_ERROR([ch4:glex needs linux/futex.h: install the Debian package linux-libc-dev])])
    AC_SEARCH_LIBS([shm_open], [rt], [],
        [AC_MSG_ERROR([ch4:glex needs shm_open: install the Debian package libc6-dev])])
    dnl jobs across hosts over libfabric, unless scripts/build-mpich.sh
    dnl passes GLEX_LIBFABRIC=no (this project's configure --without-libfabric);
    dnl its headers only: the netmod dlopen()s libfabric.so.1 when a job first
    dnl spans hosts (glex_emu_fi.c), so a one-host job never loads it
    glex_fabric=no
    AS_IF([test "X$GLEX_LIBFABRIC" != "Xno"], [
        AC_CHECK_HEADER([rdma/fabric.h], [
            AC_SEARCH_LIBS([dlopen], [dl], [glex_fabric=yes])])])
    AS_IF([test "X$GLEX_LIBFABRIC" = "Xyes" && test "$glex_fabric" = no],
        [AC_MSG_ERROR([ch4:glex: libfabric not found: install the Debian package libfabric-dev])])
    AS_IF([test "$glex_fabric" = yes],
        [PAC_APPEND_FLAG([-DGLEX_HAVE_LIBFABRIC=1], [CPPFLAGS])])
    AC_MSG_NOTICE([ch4:glex jobs across hosts (libfabric): $glex_fabric])
])dnl
])dnl

[#] end of __file__
