"""NVFlare 2.9.0 FedOpt from an initial checkpoint: the server optimizer steps the source model's own weights, not
the checkpoint's; without fedtheory.

Reddi et al. (2021), Alg. 2: x_{t+1} = x_t + ServerOpt(Delta_t), Delta_t the clients' averaged update from x_t.
NVFlare's FedOpt controller (nvflare/app_opt/pt/fedopt_ctl.py) takes the global model from `model` or its
persistor -- the initial checkpoint (FedOptRecipe(initial_ckpt=...) loads it with PTFileModelPersistor,
source_ckpt_file_full_name, which reads the file and does not load it into the model object) -- and the clients
train from it. But FedOpt.update_model -> optimizer_update (fedopt_ctl.py:115-140) sets the gradient of
source_model's parameters to -Delta and steps *them*: source_model is never loaded with the checkpoint (run(),
lines 72-113, only moves it to the device), so round 1's new global model is the source model's initial weights
plus the server step, and the checkpoint is lost. PTFedOptModelShareableGenerator.server_update
(nvflare/app_opt/pt/fedopt.py:157-182, the recipe's path) does the same. From round 2 the source model holds the
global model, so later rounds agree. SGD with momentum 0.6 and lr 1 (FedOpt's default optimizer_args), no
schedule, one averaged update Delta from a checkpoint x:
"""
import numpy as np
import torch
from nvflare.app_common.abstract.fl_model import FLModel, ParamsType
from nvflare.app_opt.pt.fedopt_ctl import FedOpt

torch.set_default_dtype(torch.float64)
torch.manual_seed(0)
source_model = torch.nn.Linear(3, 1, bias=False)                        # the user's model object, as built
x = np.array([[0.5, -1.0, 2.0]])                                       # the initial checkpoint
delta = np.array([[0.1, 0.2, -0.3]])                                   # the clients' averaged update from x
ctl = FedOpt(num_clients=1, num_rounds=1, source_model=source_model, device="cpu",
             model=FLModel(params={"weight": x}, params_type=ParamsType.FULL))
ctl.torch_model = source_model                                         # what run() sets up, lines 72-111
ctl.optimizer = torch.optim.SGD(source_model.parameters(), lr=1.0, momentum=0.6)
ctl.lr_scheduler = None
ctl.info = lambda *a, **k: None                                        # logging needs the engine
w0 = source_model.weight.detach().numpy().copy()
new = ctl.update_model(FLModel(params={"weight": x}), FLModel(params={"weight": delta}))
got = np.asarray(new.params["weight"])
print("NVFlare x_1", got.ravel(), "\nAlg. 2 x_1", (x + delta).ravel(), "\nsource model's weights + Delta",
      (w0 + delta).ravel())
assert np.allclose(got, w0 + delta) and not np.allclose(got, x + delta, atol=1e-3)
