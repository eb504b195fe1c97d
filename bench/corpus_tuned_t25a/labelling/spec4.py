from lab import label
label("difftaichi", "examples/smoke_taichi.py", [(r"arch=ti.cuda", "kernel", "Taichi kernels compiled for the CUDA arch")])
for p in ["examples/smoke_taichi_cpu.py", "examples/mass_spring_interactive.py", "examples/misc/rigid_body_discountinuity.py"]:
    label("difftaichi", p, [])
