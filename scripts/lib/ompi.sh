# shellcheck shell=bash
# Open MPI's launcher and a host cut off (docs/jobs.md, "Failure"): mpirun
# gives up on a daemon it cannot reach only when its out-of-band TCP
# keepalive says the link is dead (by default after 300 s idle and 9
# probes 20 s apart), and never while it has unanswered data queued on
# that link, as it has once it starts ending the job after a rank left.
# So the keepalive must fire before any rank leaves: probes after 4 s
# idle, 1 s apart, 3 missed, and mpirun ends the job within about 7 s of a
# cut, inside progrun's silence bound (RIG_JOB_SILENCE, 10 s by default).
export OMPI_MCA_oob_tcp_keepalive_time=4
export OMPI_MCA_oob_tcp_keepalive_intvl=1
export OMPI_MCA_oob_tcp_keepalive_probes=3
