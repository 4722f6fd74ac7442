# fabricsim on Debian 12: the README's two commands, run.sh (build and the DGX H100
# example) at image build time and test.sh (the whole suite) as the default command.
#   docker build -t fabricsim . && docker run --rm fabricsim
# Untested here: no container engine was available where this file was written.
FROM debian:12
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sudo ca-certificates \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /fabricsim
COPY . .
RUN rm -rf build build-asan out third_party/echarts/node_modules && scripts/run.sh
CMD ["scripts/test.sh"]
