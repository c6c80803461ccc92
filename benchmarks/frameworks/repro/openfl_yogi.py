"""OpenFL 1.9's FedYogi against Reddi et al. (2021), Alg. 2 (and Zaheer et al. 2018's Yogi), without fedtheory.

(1) YogiAdaptiveAggregation cannot be built: its __init__ passes `epsilo=epsilon` to NumPyYogi
    (openfl/interface/aggregation_functions/yogi_adaptive_aggregation.py), a TypeError.
(2) NumPyYogi's second moment is v <- beta2 v + (1 - beta2) sign(g^2 - v) g^2
    (openfl/utilities/optimizers/numpy/yogi_optimizer.py, _update_second_moment). Yogi's is
    v <- v - (1 - beta2) sign(v - g^2) g^2: no beta2 on v. The two agree on the first step from v = 0 and differ
    from the second on by (1 - beta2) v. Here two steps with beta2 = 0.9, g = 1 then g = 0.1.
"""
import numpy as np
from openfl.interface.aggregation_functions import YogiAdaptiveAggregation
from openfl.utilities.optimizers.numpy import NumPyYogi

try:
    YogiAdaptiveAggregation(params={"w": np.zeros(1)})
    raise SystemExit("YogiAdaptiveAggregation was built: (1) is fixed")
except TypeError as error:
    print(f"(1) YogiAdaptiveAggregation(params=...) raises TypeError: {error}")

b2 = 0.9
opt = NumPyYogi(params={"w": np.zeros(1)}, learning_rate=0.1, betas=(0.0, b2))
v = 0.0
for g in (1.0, 0.1):
    opt.step({"w": np.array([g])})
    v = v - (1 - b2) * np.sign(v - g ** 2) * g ** 2    # Yogi (Alg. 2's FedYogi)
openfl_v = opt.grads_second_moment["w"][0]
print(f"(2) v after two steps: OpenFL {openfl_v:.6f}, Yogi {v:.6f}")
assert abs(openfl_v - 0.089) < 1e-12 and abs(v - 0.099) < 1e-12
