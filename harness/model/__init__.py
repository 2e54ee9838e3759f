"""The ground floor: the domain's names and pure math, imported by every other package and importing
nothing of bidbench's. No I/O, no processes, no clocks."""
